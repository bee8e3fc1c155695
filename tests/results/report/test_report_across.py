"""`rig report RUN1 RUN2 ...`: the same points of several runs side by side, each run's
ratio to the first with its interval, significant differences flagged (issue 23,
"comparisons across runs and boards")."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from support.bad_input import assert_refused, run_rig
from support.synthetic import BOARDS, OPS, make_run

from energyrig.results import load
from energyrig.results.outputs import OutputError
from energyrig.results.report.across import compare_runs, conditions_apart, write_across
from energyrig.results.stats import ratio_of_means
from energyrig.results.store.segments import sha256

# the report's figures drawn once per process for the same tables (support/report_memo.py)
pytestmark = pytest.mark.usefixtures("figures_drawn_once")

#: The energy columns of the windows table, scaled together.
ENERGY = ("energy_j", "net_energy_j", "energy_per_op_j", "net_energy_per_op_j")
SMALL = {"boards": BOARDS[:1], "ops": OPS[:5] + OPS[11:12], "payloads": (64, 1024),
         "reps": 2, "n_windows": 5}


def scale_energy(run_dir: Path, factor: float) -> None:
    """Multiply every window's energies by ``factor`` in the stored tables (and mend the
    segment index's checksums), as if the board drew ``factor`` times the power."""
    index_path = run_dir / "segments.json"
    index = json.loads(index_path.read_text())
    for entry in index["windows.parquet"]:
        path = run_dir / "windows.parquet" / entry["file"]
        table = pq.read_table(path)
        for col in ENERGY:
            i = table.schema.get_field_index(col)
            table = table.set_column(i, table.schema.field(i), pc.multiply(table[col], factor))
        pq.write_table(table, path)
        entry["sha256"] = sha256(path)
    index_path.write_text(json.dumps(index))


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("runs") / "monday", seed=5, **SMALL)


def _copy(base: Path, where: Path, factor: float) -> Path:
    run = shutil.copytree(base, where)
    scale_energy(run, factor)
    return run


def test_a_run_drawing_more_power_is_flagged_with_a_ratio_ci_holding_the_factor(
        base: Path, tmp_path: Path) -> None:
    b = _copy(base, tmp_path / "tuesday", 1.25)
    across = compare_runs([load(base), load(b)])
    energy = across.comparison[(across.comparison["metric"] == "net_energy_per_op_j")
                               & (across.comparison["run"] == "tuesday")]
    assert len(energy) == 5 * 2 + 1  # five ops at two payload sizes, ecdsa-sign at none
    assert (energy["ratio_ci_low"] <= 1.25).all() and (energy["ratio_ci_high"] >= 1.25).all()
    assert energy["significant"].all()
    time = across.comparison[(across.comparison["metric"] == "time_per_op_s")
                             & (across.comparison["run"] == "tuesday")]
    assert time["ratio"].to_list() == pytest.approx([1.0] * len(time))
    assert not time["significant"].any()


def test_the_ratio_interval_covers_the_factor_under_independent_noise(tmp_path: Path) -> None:
    a = make_run(tmp_path / "a", seed=11, **SMALL)
    b = make_run(tmp_path / "b", seed=12, **SMALL)
    scale_energy(b, 1.05)
    rows = compare_runs([load(a), load(b)]).comparison
    energy = rows[(rows["metric"] == "net_energy_per_op_j") & (rows["run"] == "b")]
    covered = (energy["ratio_ci_low"] <= 1.05) & (energy["ratio_ci_high"] >= 1.05)
    assert covered.mean() >= 0.8, energy
    assert energy["significant"].mean() >= 0.5  # 1 % noise: a 5 % change shows
    same = rows[(rows["metric"] == "time_per_op_s") & (rows["run"] == "b")]
    assert same["significant"].mean() <= 0.2  # no change: few false alarms


def test_fieller_interval_is_exact_for_scaled_samples_and_unbounded_near_zero() -> None:
    r = ratio_of_means([1.0, 1.1, 0.9, 1.05], [2.0, 2.2, 1.8, 2.1])
    assert r.ratio == pytest.approx(2.0) and r.ci_low < 2.0 < r.ci_high and r.significant
    loose = ratio_of_means([0.1, -0.05, 0.2, -0.1], [1.0, 1.1, 0.9, 1.0])
    assert (loose.ci_low, loose.ci_high) == (float("-inf"), float("inf"))
    assert not loose.significant
    with pytest.raises(ValueError, match="two values"):
        ratio_of_means([1.0], [1.0, 2.0])


def test_two_boards_are_compared_point_by_point(tmp_path: Path) -> None:
    small = {k: v for k, v in SMALL.items() if k != "boards"}
    a = make_run(tmp_path / "nrf", seed=3, boards=BOARDS[:1], **small)
    b = make_run(tmp_path / "esp", seed=4, boards=BOARDS[1:], **small)
    across = compare_runs([load(a), load(b)])
    assert "board" not in across.matched
    assert across.apart["board"] == ("nrf52840dk", "esp32-devkitc")
    assert across.comparison["significant"].any()  # the boards' powers differ


def test_points_in_one_run_only_are_listed_as_such(base: Path, tmp_path: Path) -> None:
    fewer = make_run(tmp_path / "fewer", seed=6, **{**SMALL, "ops": OPS[:2]})
    across = compare_runs([load(base), load(fewer)])
    only = across.unmatched
    assert set(only["op"]) == {o.op for o in SMALL["ops"][2:]}
    assert (only["fewer"] == "not in plan").all() and (only["monday"] == "ok").all()
    assert set(across.comparison["op"]) == {o.op for o in OPS[:1]}  # aes 128 and 192


def test_rig_report_of_two_runs_writes_the_page_table_and_methods(
        base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    b = _copy(base, tmp_path / "tuesday", 1.25)
    monkeypatch.chdir(tmp_path)
    code, err = run_rig(["report", str(base), str(b)], capsys, tmp_path)
    assert code == 0, err
    out = tmp_path / "report-monday-vs-tuesday"
    page = (out / "report.html").read_text()
    assert page.count("tuesday differs") == 11 and "×1.25" in page
    table = pd.read_csv(out / "comparison.csv")
    assert set(table["run"]) == {"monday", "tuesday"}
    methods = (out / "methods.md").read_text()
    assert methods.count("## Methods: synthetic") == 2
    assert page.count("<p class='methods'>") == 2


@pytest.mark.pipeline  # a whole report drawn by rig report (tests/README.md)
def test_one_run_keeps_the_single_run_report(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    # any one run takes the single run's report: one board, two ops at one size (its figures
    # a fifth of the comparison's runs')
    one = make_run(tmp_path / "monday", seed=5, boards=BOARDS[:1], ops=(OPS[0], OPS[4]),
                   payloads=(64,), reps=1, n_windows=2)
    code, err = run_rig(["report", str(one), "--out", str(tmp_path / "one")], capsys,
                        tmp_path)
    assert code == 0, err
    written = {p.name for p in (tmp_path / "one").iterdir()}
    assert {"report.html", "methods.md"} <= written and "comparison.csv" not in written
    assert any(name.endswith(".png") for name in written)


def test_runs_with_no_point_in_common_are_refused(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    a = make_run(tmp_path / "aes", seed=7, **{**SMALL, "ops": OPS[:1]})
    b = make_run(tmp_path / "sha", seed=8, **{**SMALL, "ops": OPS[4:5]})
    assert_refused(["report", str(a), str(b), "--out", str(tmp_path / "cmp")],
                   f"{b}: no point measured in both it and {a}", tmp_path, capsys,
                   monkeypatch)


def test_the_comparison_never_goes_into_a_run(base: Path, tmp_path: Path) -> None:
    b = _copy(base, tmp_path / "tuesday", 1.1)
    with pytest.raises(OutputError, match="the run"):
        write_across([base, b], b / "points.parquet")


def test_a_run_given_twice_is_refused(base: Path, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    assert_refused(["report", str(base), str(base), "--out", str(tmp_path / "cmp")],
                   f"{base}: given twice", tmp_path, capsys, monkeypatch)


@pytest.mark.pipeline  # a browser (tests/README.md)
def test_the_comparison_page_works_in_a_browser_at_800_px(base: Path, tmp_path: Path) -> None:
    b = _copy(base, tmp_path / "tuesday", 1.25)
    c = _copy(base, tmp_path / "wednesday", 0.9)
    page_path = write_across([base, b, c], tmp_path / "cmp")
    from support.browser import chromium, open_page  # playwright: not at collection

    with chromium() as browser:
        page, errors = open_page(browser, page_path, 800)
        width = page.evaluate("document.documentElement.clientWidth")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        rights = page.evaluate("[...document.querySelectorAll('table')].map(t => "
                               "(t.closest('.scroll') || t).getBoundingClientRect().right)")
        assert rights and max(rights) <= width
        # the first column, what differs, is in sight in every row of the energy table
        energy = page.locator("table.sortable").nth(1)
        cells = energy.evaluate("t => [...t.tBodies[0].rows].map(r => [r.cells[0].innerText,"
                                " r.cells[0].getBoundingClientRect().right])")
        assert all(text == "tuesday differs\nwednesday differs" and right <= width
                   for text, right in cells), cells
        heading = energy.locator("th", has_text="tuesday / monday")
        heading.click()
        assert errors == []
        page.close()


def test_a_firmware_change_between_the_runs_is_named(base: Path, tmp_path: Path) -> None:
    b = Path(shutil.copytree(base, tmp_path / "after"))
    manifest = json.loads((b / "manifest.json").read_text())
    manifest["firmware"] |= {"build": "e95a423", "conditions": {"optimization": "-O2"}}
    (b / "manifest.json").write_text(json.dumps(manifest))
    apart = conditions_apart(compare_runs([load(base), load(b)]))
    assert apart == ["firmware build: monday not recorded, after e95a423",
                     "optimization: monday not recorded, after -O2"]
    assert conditions_apart(compare_runs([load(base), load(_copy(base, tmp_path / "x", 1))])
                            ) == []
