"""The report, on synthetic runs whose true costs are known (tests/support/synthetic.py)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.synthetic import BOARDS, OPS, make_factorial_run, make_run

from energyrig.domain import Point, Window
from energyrig.errors import ConfigError
from energyrig.results import RunWriter, load
from energyrig.results.compare import Compare, recorded_comparisons
from energyrig.results.report import write_report
from energyrig.results.report.page import Images, page_html
from energyrig.results.report.sections import report_tables
from energyrig.results.report.tables import (
    ReportTables,
    auto_comparisons,
    comparisons,
    design_factors,
    factorial,
    reference_comparisons,
    summarise_workloads,
)
from energyrig.results.stats import describe
from energyrig.results.store.layout import POINT_SCHEMA, RunError
from energyrig.results.store.read import Run
from energyrig.rig.flags import FLAGS
from energyrig.rig.plan import Plan
from energyrig.units import column_prefix, format_gum

# the report's figures drawn once per process for the same tables (support/report_memo.py)
pytestmark = pytest.mark.usefixtures("figures_drawn_once")


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("runs") / "full")


@pytest.fixture(scope="module")
def full_tables(full_run: Path) -> tuple[Run, ReportTables]:
    """The full run and its report's tables, computed once for the tests that only read them."""
    run = load(full_run)
    return run, report_tables(run, FLAGS)


#: A run of one board, a symmetric and a hash op at one size, two windows a point (and, as every
#: synthetic run, a failed and a skipped point): its whole report draws a tenth of the figures
#: of the full run's, for the tests of what any report does (written, refused, exported).
SMALL_RUN = {"boards": BOARDS[:1], "ops": (OPS[0], OPS[4]), "payloads": (64,), "reps": 1,
             "n_windows": 2}


#: A run with every section of the report and the ops the whole report's tests read (one
#: board; a symmetric, hash and public-key family of two ops each, one the family's reference;
#: two payload sizes; a failed and a skipped point): what those tests assert of the page and
#: its figures holds of any run that has them, at a third of the full run's drawing.
SECTIONS_RUN = {"boards": BOARDS[:1], "ops": (OPS[0], OPS[3], OPS[4], OPS[5], OPS[7], OPS[8]),
                "payloads": (64, 1024)}
#: The ops the plan's comparisons below name and an automatic pair (rc6 against AES-128, the
#: symmetric reference), one board, one payload size twice: two common conditions a pair.
PLANNED_RUN = {"boards": BOARDS[:1], "ops": (OPS[0], OPS[3], OPS[5], OPS[6], OPS[10], OPS[12]),
               "payloads": (64,)}


@pytest.fixture(scope="module")
def sections_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("runs") / "sections", **SECTIONS_RUN)


@pytest.fixture(scope="module")
def full_report(sections_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole report (every section, every figure) of :data:`SECTIONS_RUN`."""
    return write_report(sections_run, tmp_path_factory.mktemp("report"), flags=FLAGS)


def _cost(op: str, key_bits: int | None = None, curve: str | None = None) -> float:
    return next(c for c in OPS if c.op == op and c.key_bits == key_bits and c.curve == curve
                ).fixed_cycles


def test_tables_are_dataframes_of_si_values(full_tables: tuple[Run, ReportTables]) -> None:
    _, tables = full_tables
    assert tables.families == ["symmetric", "hash", "public-key"]
    assert set(tables.ok["status"]) == {"ok"} and len(tables.points) > len(tables.ok)
    aes = tables.summary[(tables.summary["op"] == "aes-ecb-encrypt")
                         & (tables.summary["key_bits"] == 128)
                         & (tables.summary["payload_bytes"] == 1024)
                         & (tables.summary["board"] == "nrf52840dk")].iloc[0]
    assert 1e-6 < aes["net_energy_per_op_j_mean"] < 1e-5  # J, not µJ
    assert aes["label"] == "aes-ecb-encrypt 128 · nrf52840dk 64 MHz"
    assert tables.has_relative("hash") and tables.has_payload_fits("hash")
    assert not tables.has_payload_fits("public-key")
    assert set(tables.family_fits("hash")) == {"time_per_op_s", "net_energy_per_op_j"}
    assert not tables.planned_comparisons and len(tables.comparisons)
    assert tables.factorial is None


def test_tables_and_page_need_no_matplotlib(full_run: Path) -> None:
    # the page is built from the tables alone: no figure drawn, no image shown
    code = f"""
import sys
from energyrig.results import load
from energyrig.results.report.page import Images, page_html
from energyrig.results.report.sections import report_tables
from energyrig.rig.flags import FLAGS
run = load({str(full_run)!r})
page = page_html(run, report_tables(run, FLAGS), Images())
assert "matplotlib" not in sys.modules, "matplotlib imported"
assert "<img" not in page and ">Paired comparisons<" in page and ">hash<" in page, page
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr


def test_the_page_shows_the_images_it_is_given(full_tables: tuple[Run, ReportTables]) -> None:
    page = page_html(*full_tables, Images(energy_time={"hash": "e.png"},
                                          payload={"hash": "p.png"}))
    assert re.findall(r"<img src='([^']+)'", page) == ["e.png", "p.png"]


def test_the_page_lists_the_firmwares_measurement_conditions(tmp_path: Path) -> None:
    hello = {"board": "nrf52840dk", "conditions": {"mbedtls_ecp_nist_optim": "on",
                                                   "regulator": "dcdc", "caches": "icache"}}
    with RunWriter.create(tmp_path / "one", firmware=hello):
        pass
    page = write_report(tmp_path / "one", flags=FLAGS).read_text()
    section = page[page.index("<h2>Measurement conditions</h2>"):]
    for name, value in hello["conditions"].items():
        assert f"<tr><td>{name}</td><td>{value}</td></tr>" in section
    two = {"board": "a, b", "boards": {"a": hello, "b": {"board": "b", "conditions": {
        "regulator": "ldo"}}}}
    with RunWriter.create(tmp_path / "two", firmware=two):
        pass
    page = write_report(tmp_path / "two", flags=FLAGS).read_text()
    assert "<tr><td>regulator</td><td>dcdc</td><td>ldo</td></tr>" in page
    assert "<tr><td>caches</td><td>icache</td><td>–</td></tr>" in page
    with RunWriter.create(tmp_path / "old", firmware={"board": "host"}):
        pass
    assert "did not report its conditions" in write_report(tmp_path / "old", flags=FLAGS).read_text()


def test_the_cli_loads_no_report_module_before_it_writes_one() -> None:
    code = ("import sys, energyrig.cli.report; "
            "print([m for m in ('matplotlib', 'energyrig.results.report') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_comparisons_are_read_through_the_plans_model(tmp_path: Path) -> None:
    plan = Plan.model_validate({"factors": {"op": ["sha256"]}, "compare": [
        {"a": "sha256", "b": {"op": "aes-cbc-encrypt", "key_bits": 128}}]})
    pairs = recorded_comparisons(plan.record(), tmp_path / "manifest.json")
    assert pairs == plan.compare == (
        Compare(a="sha256", b={"op": "aes-cbc-encrypt", "key_bits": 128}),)
    assert pairs[0].selectors() == ({"op": "sha256"}, {"op": "aes-cbc-encrypt", "key_bits": 128})
    assert recorded_comparisons({}, tmp_path / "manifest.json") == ()
    with pytest.raises(ConfigError, match=r"manifest.json: plan.compare\[1\]: .*c: Extra"):
        recorded_comparisons({"compare": [{"a": "x", "b": "y"}, {"a": "x", "b": "y", "c": 1}]},
                             tmp_path / "manifest.json")


def test_report_has_every_section_and_its_figures(full_report: Path) -> None:
    page = full_report.read_text()
    for heading in ("symmetric", "hash", "public-key", "Paired comparisons",
                    "Failed and skipped points", "Relative to the reference",
                    "Against payload size"):
        assert f">{heading}<" in page, heading
    images = re.findall(r"<img src='([^']+)'", page)
    assert len(images) == 8  # energy-time x3, relative x3, payload x2 (no payload in pk)
    for name in images:
        png = full_report.parent / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert "DUT did not answer within 600 s" in page and "sha256 takes no key_bits" in page
    assert "2<sup>" not in page  # not a 2^k design
    assert "in progress" not in page


def test_every_per_op_figure_draws_its_confidence_intervals(full_report: Path) -> None:
    """The data beside each PNG: every point of a per-op figure (energy against time,
    against payload) has its 95 % interval's ends around it, drawn as error bars."""
    images = re.findall(r"<img src='([^']+)'", full_report.read_text())
    per_op = [n for n in images if n.startswith(("energy-time-", "payload-"))]
    assert len(per_op) == 5
    for name in images:
        data = json.loads((full_report.parent / name).with_suffix(".json").read_text())
        assert data["points"], name
        if name not in per_op:
            continue
        assert "95 % confidence interval" in data["error_bars"], name
        for p in data["points"]:
            for axis in ("x", "y") if name.startswith("energy-time-") else ("y",):
                low, high = p[f"{axis}_ci"]
                assert low is not None and low <= p[axis] <= high, (name, p)


@pytest.mark.pipeline  # a whole report of a synthetic run drawn (tests/README.md)
def test_payload_figures_have_a_log_axis_and_stated_uncertainties(tmp_path: Path) -> None:
    # a hash op at two payload sizes has the payload figure whose every point this checks
    run = make_run(tmp_path / "run", boards=BOARDS[:1], ops=(OPS[4],), payloads=(64, 1024))
    segment = next((run / "points.parquet").glob("seg-*.parquet"))  # the run has one
    points = pd.read_parquet(segment)
    points["net_energy_per_op_u_j"] = points["net_energy_per_op_j_mean"] * 0.01
    pq.write_table(pa.Table.from_pandas(points, schema=POINT_SCHEMA, preserve_index=False),
                   segment)
    (run / "segments.json").unlink()  # a segment edited by hand no longer matches its index
    out = write_report(run, tmp_path / "report", flags=FLAGS).parent
    data = json.loads((out / "payload-hash.json").read_text())
    energy = [p for p in data["points"] if "net energy" in p["panel"]]
    assert energy and all(p["y_u"][1] - p["y_u"][0] == pytest.approx(0.02 * p["y"])
                          for p in energy)
    assert "expanded uncertainty" in data["error_bars"]


def test_report_tables_show_the_measured_values(sections_run: Path, full_report: Path) -> None:
    page = full_report.read_text()
    run = load(sections_run)
    w = run.windows
    sel = w[(w["op"] == "rsa-keygen") & (w["key_bits"] == 4096) & (w["board"] == "nrf52840dk")]
    net = sel["net_energy_per_op_j"].mean()
    assert 1.0 < net < 2.0  # RSA-4096 key generation costs about a joule
    # each in its family table's one prefix (the column's), to the digits of its 95 % CI
    summary = report_tables(run, FLAGS).summary

    def cell(family: str, col: str, row: pd.Series) -> str:
        prefix = column_prefix(summary.loc[summary["family"] == family, f"{col}_mean"])
        half = max(row[f"{col}_mean"] - row[f"{col}_ci_low"],
                   row[f"{col}_ci_high"] - row[f"{col}_mean"])
        return f">{format_gum(row[f'{col}_mean'], half, prefix=prefix, with_u=False)}<"

    keygen = summary[(summary["op"] == "rsa-keygen") & (summary["key_bits"] == 4096)
                     & (summary["board"] == "nrf52840dk")].iloc[0]
    assert keygen["net_energy_per_op_j_mean"] == pytest.approx(net)
    assert cell("public-key", "net_energy_per_op_j", keygen) in page
    aes = w[(w["op"] == "aes-ecb-encrypt") & (w["key_bits"] == 128)
            & (w["payload_bytes"] == 1024) & (w["board"] == "nrf52840dk")]
    assert 1e-6 < aes["net_energy_per_op_j"].mean() < 1e-5  # AES of 1 KiB: a few µJ
    aes_row = summary[(summary["op"] == "aes-ecb-encrypt") & (summary["key_bits"] == 128)
                      & (summary["payload_bytes"] == 1024)
                      & (summary["board"] == "nrf52840dk")].iloc[0]
    assert cell("symmetric", "time_per_op_s", aes_row) in page
    assert "Wh<" not in page and "Wh)" not in page  # no second line in watt-hours
    # the synthetic bench knows the truth: the table shows how far the measurement is off
    error = aes["net_energy_per_op_j"].mean() / aes["true_net_energy_per_op_j"].mean() - 1
    assert "net vs true" in page and f">{error * 100:+.2f} %<" in page


def test_table_headings_units_and_title_say_what_they_are(full_report: Path,
                                                          tmp_path: Path) -> None:
    page = full_report.read_text()
    heads = re.findall(r"<th title='click to sort'>([^<]+)</th>", page)
    assert {"time / op 95 % CI", "gross energy / op 95 % CI",
            "net energy / op 95 % CI"} <= set(heads)
    assert "CI" not in heads  # a CI always says of what
    assert "<title>energyrig: synthetic</title>" in page  # the plan's name, not the folder's
    assert "·10" not in page and "-0.00 %" not in page
    assert page.count("<div class='scroll'><table") == page.count("<table")
    assert "<script>" in page and "src=" not in page.split("<script>")[1]  # inline, no network
    # a tiny negative error and an energy far below 1 nWh
    with RunWriter.create(tmp_path / "folder", plan={"name": "night plan"}) as writer:
        window = Window(0.0, 0.01, 100, 5.1e-12, 0.0, true_net_energy_j=5.1e-12 * 1.00001)
        writer.write_point(Point(op="sha256", family="hash", board="b", payload_bytes=64),
                           [window] * 3, batch_n=10)
    page = write_report(tmp_path / "folder", flags=FLAGS).read_text()
    assert "<h1>energyrig report: night plan</h1>" in page
    assert ">0.00 %<" in page and "-0.00 %" not in page
    # 0.51 pJ per op: in the column's prefix, fJ, no line in fWh
    assert ">net energy / op (fJ)<" in page and ">510<" in page and "fWh" not in page


def test_current_and_charge_stand_beside_power_and_energy(full_report: Path,
                                                          tmp_path: Path) -> None:
    # the synthetic fixture records no supply voltage: the page says so, shows no current
    assert "No supply voltage recorded" in full_report.read_text()
    fixture = {"name": "bench", "instrument": {"kind": "ppk2", "supply_v": 2.5}}
    with RunWriter.create(tmp_path / "volts", fixture=fixture) as writer:
        # 10 ops in 10 ms drawing 1.25 mW net of 0.25 mW idle: 1.5 mW gross
        window = Window(0.0, 0.01, 100, 1.5e-5, 2.5e-4)
        writer.write_point(Point(op="sha256", family="hash", board="b", payload_bytes=64),
                           [window] * 3, batch_n=10)
    tables = report_tables(load(tmp_path / "volts"), FLAGS)
    row = tables.summary.iloc[0]
    assert tables.supply_v == 2.5
    assert row["mean_current_a_mean"] == pytest.approx(1.5e-3 / 2.5)  # 600 µA
    assert row["net_charge_per_op_c_mean"] == pytest.approx(1.25e-6 / 2.5)  # 500 nC
    page = write_report(tmp_path / "volts", flags=FLAGS).read_text()
    assert ">mean current (µA)<" in page and ">600<" in page
    assert ">net charge / op (nC)<" in page and ">500<" in page and "pAh" not in page
    assert "supply of 2.5 V" in page


def _many_ops_run(run_dir: Path, n: int) -> Path:
    """``n`` symmetric ops on one board, each at 64 and 256 B twice, the i-th costing
    i + 1 units (so the first is the best trade-off of every panel)."""
    with RunWriter.create(run_dir, plan={"name": "many"}) as writer:
        for i in range(n):
            for size in (64, 256):
                for rep in range(2):
                    cost = (i + 1) * size * 1e-9 * (1 + 0.01 * rep)
                    writer.write_point(
                        Point(op=f"aes{i}-ecb-encrypt", family="symmetric", board="host",
                              key_bits=128, payload_bytes=size, rep=rep),
                        [Window(0.0, cost * 1e3, 100, cost, 0.0),
                         Window(0.0, cost * 1.02e3, 100, cost * 1.02, 0.0)], batch_n=10)
    return run_dir


@pytest.mark.pipeline  # a whole report of a synthetic run drawn (tests/README.md)
def test_best_is_marked_on_its_own_point_and_colours_never_repeat(tmp_path: Path) -> None:
    from energyrig.results.report.figures import NEUTRAL  # matplotlib: not at collection
    report = write_report(_many_ops_run(tmp_path / "many", 23), flags=FLAGS).parent
    energy_time = json.loads((report / "energy-time-symmetric.json").read_text())
    payload = json.loads((report / "payload-symmetric.json").read_text())
    for data in (energy_time, payload):
        colours = {p["label"].split(" · ")[0]: p["colour"] for p in data["points"]}
        assert len(colours) == 23 and len(set(colours.values())) == 23
        assert NEUTRAL not in colours.values()  # the board markers' grey
    marks = energy_time["marks"]
    assert {m["panel"] for m in marks} == {p["panel"] for p in energy_time["points"]}
    for mark in marks:
        panel = [p for p in energy_time["points"] if p["panel"] == mark["panel"]]
        x, y = np.array([p["x"] for p in panel]), np.array([p["y"] for p in panel])
        best = panel[int(np.argmin(np.hypot(x / x.max(), y / y.max())))]
        assert best["label"].startswith("aes0-ecb-encrypt")
        assert mark["anchor"] == [best["x"], best["y"]] and mark["label"] == best["label"]


def test_best_is_not_marked_on_a_panel_of_one_point(tmp_path: Path) -> None:
    from energyrig.results.report.figures import figure_energy_time  # matplotlib: not at collection
    tables = report_tables(load(_many_ops_run(tmp_path / "one", 1)), FLAGS)
    drawing = figure_energy_time(tables.summary, "symmetric")
    assert drawing is not None and drawing.data()["marks"] == []
    legend = [t.get_text() for t in drawing.figure.legends[0].get_texts()]
    assert not any("best" in t for t in legend)


def test_payload_panels_have_axis_titles_and_readable_legends(tmp_path: Path) -> None:
    from energyrig.results.report.figures import figure_payload  # matplotlib: not at collection
    tables = report_tables(load(_many_ops_run(tmp_path / "many", 3)), FLAGS)
    drawing = figure_payload(tables.ok, tables.fits, "symmetric")
    assert drawing is not None
    axes = [ax for ax in drawing.figure.axes if ax.get_visible()]
    assert len(axes) == 2
    for ax in axes:
        assert ax.get_ylabel() in ("time per op", "net energy per op")
        assert ax.get_xlabel() == "payload (log scale)"
        texts = ax.get_legend().get_texts()
        assert len(texts) == 3 and min(t.get_fontsize() for t in texts) >= 8


def test_a_skewed_point_gets_a_fitting_interval_and_its_warm_up_is_shown(
        tmp_path: Path) -> None:
    # one 79 ms warm-up window among three: the t interval of the time per op goes below 0
    times = [0.079, 0.0012, 0.0011]
    with RunWriter.create(tmp_path / "warm", plan={"name": "warm"}) as writer:
        writer.write_point(Point(op="sha256", family="hash", board="b", payload_bytes=64),
                           [Window(0.0, t, 100, t * 1e-3, 1e-4) for t in times], batch_n=1)
        writer.write_point(Point(op="sha512", family="hash", board="b", payload_bytes=64),
                           [Window(0.0, t, 100, t * 1e-3, 1e-4)
                            for t in (0.0021, 0.0020, 0.0022, 0.0019)], batch_n=1)
        # a first window faster than the others is no warm-up
        writer.write_point(Point(op="sha1", family="hash", board="b", payload_bytes=64),
                           [Window(0.0, t, 100, t * 1e-3, 1e-4)
                            for t in (0.0010, 0.0020, 0.0020, 0.0020)], batch_n=1)
    tables = report_tables(load(tmp_path / "warm"), FLAGS)
    sha256 = tables.summary[tables.summary["op"] == "sha256"].iloc[0]
    assert describe(times).ci_low < 0  # what the report used to print
    assert sha256["time_per_op_s_ci_method"] == "bootstrap"
    assert min(times) <= sha256["time_per_op_s_ci_low"] < sha256["time_per_op_s_mean"]
    assert sha256["time_per_op_s_ci_high"] <= max(times)
    sha512 = tables.summary[tables.summary["op"] == "sha512"].iloc[0]
    assert sha512["time_per_op_s_ci_method"] == "t"  # well-behaved data keep the t interval
    # the warm-up window is found and shown apart; sha512's first window is not an outlier
    assert list(tables.warmups["op"]) == ["sha256"]
    warm = tables.warmups.iloc[0]
    assert warm["time_per_op_s"] == pytest.approx(0.079)
    assert warm["others_median_s"] == pytest.approx(0.00115)
    page = write_report(tmp_path / "warm", flags=FLAGS).read_text()
    assert ">Warm-up windows<" in page and ">79.0<" in page and ">1.15<" in page
    assert ">first window: time / op (ms)<" in page and ">the others: median (ms)<" in page
    assert "<br>(bootstrap)<" in page
    low = sha256["time_per_op_s_ci_low"] / sha256["time_per_op_s_mean"] - 1
    assert f">{low * 100:+.2g} % … " in page  # its ends, relative to the mean


def _ratios(points: pd.DataFrame) -> pd.DataFrame:
    """:func:`reference_comparisons` of the ok points, one row per op configuration:
    ``reference`` and ``<metric column>_ratio``."""
    table, _ = reference_comparisons(points[points["status"] == "ok"])
    wide = table.pivot(index="a", columns="metric", values="ratio")
    return pd.DataFrame({"reference": table.groupby("a")["b"].first(),
                         "time_per_op_s_ratio": wide["time"],
                         "net_energy_per_op_j_ratio": wide["net energy"]})


def test_relative_bars_recover_the_model_ratios(full_run: Path) -> None:
    rel = _ratios(load(full_run).points)
    ecdsa = rel.loc["ecdsa-sign p256"]
    assert ecdsa["reference"] == "rsa-sign 2048"
    # same board power for both: time and energy ratio are the ratio of cycles
    expected = _cost("ecdsa-sign", curve="p256") / _cost("rsa-sign", key_bits=2048)
    assert ecdsa["time_per_op_s_ratio"] == pytest.approx(expected, rel=0.02)
    assert ecdsa["net_energy_per_op_j_ratio"] == pytest.approx(expected, rel=0.03)
    keygen = rel.loc["rsa-keygen 4096"]
    assert keygen["reference"] == "rsa-keygen 2048"
    assert keygen["time_per_op_s_ratio"] == pytest.approx(7.0e9 / 9.0e8, rel=0.02)
    assert "sha256" not in rel.index  # the reference: the line at x1, no bar of its own
    rc6 = rel.loc["rc6-ecb-encrypt 128"]
    assert rc6["reference"] == "aes-ecb-encrypt 128" and rc6["time_per_op_s_ratio"] < 1.0


def test_paired_comparisons_find_the_cheaper_algorithm(full_run: Path) -> None:
    ok = load(full_run).points.query("status == 'ok'")
    table, notes = comparisons(ok, auto_comparisons(ok))
    assert not notes
    row = table[(table["a"] == "rc6-ecb-encrypt 128") & (table["metric"] == "net energy")].iloc[0]
    assert row["b"] == "aes-ecb-encrypt 128" and row["lower"] == "rc6-ecb-encrypt 128"
    assert row["significant"]
    assert row["n_pairs"] == len(BOARDS) * 4 * 2  # boards x payloads x repetitions
    assert row["gain_ci_low"] < row["gain_pct"] < row["gain_ci_high"]
    sign = table[(table["a"] == "ecdsa-sign p256") & (table["metric"] == "time")].iloc[0]
    assert sign["gain_pct"] == pytest.approx(
        100 * (1 - _cost("ecdsa-sign", curve="p256") / _cost("rsa-sign", key_bits=2048)),
        abs=1.0)


def test_the_comparisons_state_their_method_and_one_verdict(full_report: Path,
                                                            tmp_path: Path) -> None:
    page = full_report.read_text()
    section = page[page.index(">Paired comparisons<"):page.index("</table>",
                                                                 page.index(">Paired comp"))]
    assert "Method: paired log-ratio" in section
    assert "mean A − B" not in section and "not significant" not in section
    assert "rc6-ecb-encrypt 128 uses less energy" in section
    # a single point per op: no pair has two common conditions; a sentence, no Python list
    with RunWriter.create(tmp_path / "one") as writer:
        for op, e in (("aes-ecb-encrypt", 2e-4), ("rc6-ecb-encrypt", 1e-4)):
            writer.write_point(Point(op=op, family="symmetric", board="b", key_bits=128,
                                     payload_bytes=64), [Window(0.0, 0.01, 100, e, 1e-3)] * 2,
                               batch_n=10)
    page = write_report(tmp_path / "one", flags=FLAGS).read_text()
    assert "No pair could be compared" in page
    assert "under 1 common condition(s) (same board, cpu_hz, payload_bytes, rep)" in page
    assert "[" not in re.sub(r"<script.*?</script>|<style.*?</style>", "",
                             page[page.index(">Paired comparisons<"):], flags=re.DOTALL)


@pytest.mark.pipeline  # a whole report of a synthetic run drawn (tests/README.md)
def test_the_plan_names_the_comparisons(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path / "planned", **PLANNED_RUN)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["plan"]["compare"] = [{"a": "sha3-256", "b": "sha512"},
                                   {"a": {"op": "ecdsa-verify", "curve": "p256"},
                                    "b": {"op": "rsa-verify", "key_bits": 2048}}]
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    page = write_report(run_dir, flags=FLAGS).read_text()
    assert "The pairs the plan names" in page
    planned = page[page.index("The pairs the plan names"):page.index("</table>",
                                                                     page.index("The pairs"))]
    rows = re.findall(r"<tr><td class=''>([^<]+)</td><td class=''>([^<]+)</td>", planned)
    assert ("sha3-256", "sha512") in rows and ("ecdsa-verify p256", "rsa-verify 2048") in rows
    assert ("rc6-ecb-encrypt 128", "aes-ecb-encrypt 128") not in rows  # no automatic pairs
    # those stand apart: the rows the bars relative to the reference draw
    reference = page[page.index("against its family's reference"):]
    assert "<td class=''>rc6-ecb-encrypt 128</td><td class=''>aes-ecb-encrypt 128" in reference
    manifest["plan"]["compare"] = [{"a": "sha3-256"}]
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ConfigError,
                       match=r"manifest.json: plan.compare\[0\]: needs an a and a b .*b: Field"):
        write_report(run_dir, flags=FLAGS)


@pytest.mark.pipeline  # a whole report of a synthetic run drawn (tests/README.md)
def test_factorial_run_gets_its_allocation_of_variation(tmp_path: Path) -> None:
    run_dir = make_factorial_run(tmp_path / "fact")
    ok = load(run_dir).points.query("status == 'ok'")
    factors = design_factors(ok)
    assert factors == ["board", "key_bits", "payload_bytes"]  # cpu_hz is aliased with board
    alloc, levels = factorial(ok, factors)
    assert levels["key_bits"] == (128, 256)
    for (_, _), t in alloc.groupby(["response", "scale"]):
        assert t["fraction"].sum() == pytest.approx(1.0)
        assert t.iloc[-1]["term"] == "error"
    # time is cycles / clock: on the log scale no interaction explains anything
    log_time = alloc[(alloc["response"] == "time") & (alloc["scale"] == "log10")]
    interactions = log_time[log_time["term"].str.contains(":")]
    assert interactions["fraction"].sum() < 0.01
    page = write_report(run_dir, flags=FLAGS).read_text()
    assert "2<sup>3</sup> factorial design" in page and "allocation.png" in page


def test_a_run_in_progress_reports_what_is_there(tmp_path: Path) -> None:
    run_dir = tmp_path / "partial"
    with RunWriter.create(run_dir, plan={"name": "overnight"}) as writer:
        assert "No measured point yet" in write_report(run_dir, flags=FLAGS).read_text()
        writer.write_point(Point(op="sha256", family="hash", board="b", payload_bytes=64),
                           [Window(0.0, 0.01, 100, 2e-4, 1e-3)] * 3, batch_n=100)
        page = write_report(run_dir, flags=FLAGS).read_text()
        assert "a sweep is still writing it" in page
        assert "1 ok, 0 failed, 0 skipped" in page
        assert ">sha256 · b<" in page


def test_unknown_family_is_inferred_from_the_op_name(tmp_path: Path) -> None:
    with RunWriter.create(tmp_path / "run") as writer:
        for i, op in enumerate(("sha512", "sha256")):
            for rep in range(2):  # two conditions: a paired comparison with the reference
                writer.write_point(Point(op=op, board="b", payload_bytes=64, rep=rep),
                                   [Window(0.0, 0.01, 100, 2e-4 * (i + 1), 1e-3)] * 2,
                                   batch_n=10)
    page = write_report(tmp_path / "run", flags=FLAGS).read_text()
    assert ">hash<" in page and "relative-hash.png" in page


def test_ops_whose_names_do_not_say_what_they_do_get_a_reference(tmp_path: Path) -> None:
    # rc4 (no "-encrypt") is compared with AES-128 encryption, x25519 with P-256 ECDH.
    run_dir = tmp_path / "run"
    costs = {("aes-ecb-encrypt", 128, None): 1.0, ("rc4", None, None): 0.25,
             ("ecdh", None, "p256"): 2.0, ("x25519", None, "x25519"): 1.0}
    with RunWriter.create(run_dir) as writer:
        for (op, kb, curve), cost in costs.items():
            for size in ((64, 1024) if kb or op == "rc4" else (None,)):
                for rep in range(2):  # two conditions at least: a paired comparison
                    scale = size or 1
                    writer.write_point(
                        Point(op=op, board="b", key_bits=kb, curve=curve, payload_bytes=size,
                              rep=rep),
                        [Window(0.0, 1e-3 * cost * scale, 100, 2e-3 * cost * scale, 0.0)] * 3,
                        batch_n=1)
    rel = _ratios(load(run_dir).points)
    assert rel.loc["rc4", "reference"] == "aes-ecb-encrypt 128"
    assert rel.loc["rc4", "net_energy_per_op_j_ratio"] == pytest.approx(0.25)
    assert rel.loc["x25519 x25519", "reference"] == "ecdh p256"
    assert rel.loc["x25519 x25519", "time_per_op_s_ratio"] == pytest.approx(0.5)


@pytest.mark.pipeline  # a whole report of a synthetic run drawn (tests/README.md)
def test_rig_report_command(tmp_path: Path) -> None:
    from energyrig.results.store.schema import flat

    small_run = make_run(tmp_path / "run", **SMALL_RUN)
    out = tmp_path / "out"
    ok = subprocess.run([sys.executable, "-m", "energyrig.cli.app", "report", str(small_run),
                         "--out", str(out), "--csv"], capture_output=True, text=True,
                        timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert "report written" in ok.stdout and (out / "report.html").exists()
    # --csv: every point and every window, one row each, beside report.html
    run = load(small_run)
    assert set(run.points["status"]) == {"ok", "failed", "skipped"}
    points = pd.read_csv(out / "points.csv")
    windows = pd.read_csv(out / "windows.csv")
    assert len(points) == len(run.points) and len(windows) == len(run.windows)
    # a spreadsheet has no lists: flag_list joined by ",", a column per struct field
    assert list(windows.columns) == list(flat(run.windows).columns)
    assert "corrections.gain" in windows.columns and "flag_list" in windows.columns
    assert sorted(f if isinstance(f, str) else "" for f in windows["flag_list"]) == \
        sorted(map(",".join, run.windows.flag_list))
    assert windows["net_energy_per_op_j"].sum() == pytest.approx(
        run.windows["net_energy_per_op_j"].sum(), rel=1e-12)
    assert f"{out / 'points.csv'}" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "energyrig.cli.app", "report", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert bad.stderr.strip() == f"rig: error: {tmp_path}: no manifest.json: not a run directory"


def test_payload_fits_recover_the_cost_per_byte(full_run: Path) -> None:
    from energyrig.results.stats import payload_regression

    ok = load(full_run).points.query("status == 'ok'")
    fits = payload_regression(ok, "time_per_op_s_mean")
    board = BOARDS[0]
    fit = fits[(fits["op"] == "sha256") & (fits["board"] == board.name)].iloc[0]
    true_slope = next(c for c in OPS if c.op == "sha256").cycles_per_byte / board.cpu_hz
    assert fit["slope"] == pytest.approx(true_slope, rel=0.02)
    assert fit["r2"] > 0.99
    assert np.isfinite(fit["intercept_ci_low"])


@pytest.mark.parametrize("low, high", [(0.4, 35.0), (0.05, 9.0), (0.02, 60.0), (2e-4, 5e3), (1e-7, 1e6),
                                       (0.9, 1.1)])
def test_relative_bars_tick_labels_do_not_overlap(low: float, high: float) -> None:
    from energyrig.results.report.figures import figure_relative  # matplotlib: not at collection
    rel = pd.DataFrame([{"family": "pk", "a": a, "b": "ref", "metric": metric,
                         "ratio": r * f, "ratio_ci_low": r * f * 0.9,
                         "ratio_ci_high": r * f * 1.1, "significant": True}
                        for a, r in (("low", low), ("high", high))
                        for metric, f in (("time", 1.0), ("net energy", 1.05))])
    drawing = figure_relative(rel, "pk")
    assert drawing is not None
    fig = drawing.figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels()
             if t.get_visible() and t.get_text() and lo <= t.get_position()[0] <= hi]
    assert len(boxes) >= 2, "the axis needs at least two labelled ticks"
    boxes.sort(key=lambda b: b.x0)
    for left, right in zip(boxes, boxes[1:]):
        assert left.x1 < right.x0, "x tick labels overlap"


def test_a_window_without_baseline_does_not_blank_its_workload(tmp_path: Path) -> None:
    # A window flagged no_baseline has no net energy (NaN): the workload's net figures come
    # from the other windows, as in points.parquet, instead of turning NaN.
    point = Point(op="sha256", board="b", payload_bytes=64, family="hash")
    windows = [Window(0.0, 1e-3, 100, 2e-6, 1e-3), Window(2e-3, 3e-3, 100, 2.2e-6, 1e-3),
               Window(4e-3, 5e-3, 100, 2.1e-6, float("nan"), flags=("no_baseline",))]
    with RunWriter.create(tmp_path / "run") as writer:
        writer.write_point(point, windows, batch_n=10)
    run = load(tmp_path / "run")
    row = summarise_workloads(run.windows).iloc[0]
    assert row["net_energy_per_op_j_mean"] == pytest.approx(
        run.points.loc[0, "net_energy_per_op_j_mean"])
    assert row["net_energy_per_op_j_mean"] == pytest.approx((1e-6 + 1.2e-6) / 2 / 10)
    assert row["energy_per_op_j_mean"] == pytest.approx(2.1e-7)


def test_the_page_lists_each_points_uncertainty_budget(tmp_path: Path) -> None:
    budget = [{"component": "repeatability", "type": "A", "u_j": 1.5e-9, "source": "windows"},
              {"component": "gain calibration", "type": "B", "u_j": 2e-9, "source": "r1"},
              {"component": "skew calibration", "type": "B", "u_j": None, "source": "none"},
              {"component": "supply voltage", "type": "B", "u_j": 7e-9, "source": "fixture"}]
    with RunWriter.create(tmp_path / "run", calibration={"id": "r1", "complete": False,
                                                         "problem": "skew_s never calibrated"}
                          ) as writer:
        writer.write_point(Point(op="sha256", family="hash", board="b", payload_bytes=64),
                           [Window(0.0, 0.01, 100, 2e-4, 1e-3)] * 3, batch_n=100,
                           uncertainty={"net_energy_per_op_u_j": 5e-9, "time_per_op_u_s": 1e-6,
                                        "uncertainty_budget": budget})
    page = write_report(tmp_path / "run", flags=FLAGS).read_text()
    assert "Uncertainty of the net energy per op" in page
    section = page[page.index("Uncertainty of the net energy per op"):]
    assert ">U (k=2) (nJ)<" in section and ">u repeatability (nJ)<" in section
    assert ">5.0<" in section and ">1.5<" in section and ">2.0<" in section
    assert ">7.0<" in section                         # the supply voltage's component
    assert ">unknown<" in section                     # the skew: not calibrated
    assert "r1 — UNCALIBRATED: skew_s never calibrated" in page


@pytest.mark.pipeline  # a whole report of a synthetic run drawn (tests/README.md)
def test_a_failed_report_leaves_the_previous_one_and_nothing_half_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = make_run(tmp_path / "run", **SMALL_RUN)
    first = write_report(run, flags=FLAGS)
    before = {p.name: p.read_bytes() for p in first.parent.iterdir()}
    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    import matplotlib.figure  # not at collection: each `make check` worker collects every file

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", full_disk)
    with pytest.raises(RunError, match="cannot write the report in .*report: No space left on "
                                       "device; the previous report, if any, is unchanged"):
        write_report(run, flags=FLAGS)
    assert {p.name: p.read_bytes() for p in first.parent.iterdir()} == before
    assert sorted(p.name for p in run.iterdir() if p.name.startswith(".report")) == []


@pytest.mark.pipeline  # a whole report of a synthetic run drawn (tests/README.md)
def test_a_family_with_a_slash_still_gets_its_figures(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", **SMALL_RUN)  # its hash family: sha256
    segment = next((run / "points.parquet").glob("seg-*.parquet"))
    points = pd.read_parquet(segment)
    points["family"] = points["family"].str.replace("hash", "hash/sha")
    pq.write_table(pa.Table.from_pandas(points, schema=POINT_SCHEMA, preserve_index=False),
                   segment)
    windows = next((run / "windows.parquet").glob("seg-*.parquet"))
    table = pq.read_table(windows)
    family = pa.compute.replace_substring(table.column("family"), "hash", "hash/sha")
    pq.write_table(table.set_column(table.schema.get_field_index("family"), "family", family),
                   windows)
    (run / "segments.json").unlink()  # segments edited by hand no longer match their index
    page = write_report(run, flags=FLAGS)
    assert (page.parent / "energy-time-hash_sha.png").exists()


def test_the_report_links_the_traces_of_flagged_and_extreme_kept_windows(
        tmp_path: Path) -> None:
    from energyrig.capture import Chunk

    T, n = 1e-5, 3000
    point = Point(op="sha256", board="host", payload_bytes=64)
    energies = [1.0e-6, 2.0e-6, 3.0e-6, 0.5e-6, 1.5e-6]
    flags = [("uncalibrated",), ("glitch", "uncalibrated"), (), (), ("ci_target_not_met",)]
    windows, captures = [], {}
    for k, (energy, flag) in enumerate(zip(energies, flags, strict=True)):
        first = 10_000 * (k + 1)  # the window: samples first .. first + 399
        high = (np.arange(n) >= 2000) & (np.arange(n) < 2400)  # the chunk starts 2000 before
        captures[k] = (Chunk(first - 2000, T, np.where(high, 3e-3, 1e-6), 3.0,
                             high.astype(np.uint8)),)
        windows.append(Window(start_s=(first - 0.5) * T, end_s=(first + 399.5) * T,
                              samples=400, energy_j=energy, baseline_w=0.0, flags=flag))
    fixture = {"dut": {"board": "host"},
               "windows": {"guard_s": 2e-3, "baseline_s": 5e-3, "min_samples": 20}}
    with RunWriter.create(tmp_path / "run", fixture=fixture, keep_captures="all") as writer:
        writer.write_point(point, windows, batch_n=10, captures=captures)
    page = write_report(tmp_path / "run", tmp_path / "report", flags=FLAGS).read_text()
    section = page[page.index("<h2 id='traces'>"):]
    links = re.findall(r"<a href='([^']+)'>trace</a>", section)
    # window 1 flagged, 2 the most net energy, 3 the least; 0 and 4 are neither
    assert [re.search(r"/w(\d{4})\.png$", link)[1] for link in links] == ["0001", "0002", "0003"]
    assert "flagged glitch<" in section and "most net energy" in section
    for link, k in zip(links, (1, 2, 3), strict=True):
        data = json.loads((tmp_path / "report" / link).with_suffix(".json").read_text())
        first = 10_000 * (k + 1)
        assert (data["start_s"], data["end_s"]) == (windows[k].start_s, windows[k].end_s)
        assert data["guard_s"] == pytest.approx([(first - 200.5) * T, (first - 0.5) * T])
        assert data["baseline_s"] == pytest.approx([(first - 700.5) * T, (first - 200.5) * T])
        assert (tmp_path / "report" / link).read_bytes()[:4] == b"\x89PNG"
