"""Issue 23, "every figure reproducible from the run alone": each figure of the report has an
SVG twin and the CSV of the numbers it shows beside it; `rig report --format md|tex` writes
the tables (one per op family, factors as columns, value ± U) for a README or a paper."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest
from support.bad_input import assert_refused, run_rig
from support.synthetic import OPS, make_run

from energyrig.results import load
from energyrig.results.report import write_report
from energyrig.rig.flags import FLAGS
from energyrig.units import column_prefix, format_gum, format_si

# the report's figures drawn once per process for the same tables (support/report_memo.py)
pytestmark = pytest.mark.usefixtures("figures_drawn_once")

#: Every point's expanded uncertainties (k = 2), as a calibrated sweep stores them.
U = {"net_energy_per_op_u_j": 3.7e-9, "time_per_op_u_s": 1.3e-7, "uncertainty_budget": []}
_SCALE = {"": 1.0, "m": 1e-3, "µ": 1e-6, "n": 1e-9, "p": 1e-12, "k": 1e3}
_FACTORS = {"op": "op", "key bits": "key_bits", "payload": "payload_bytes", "board": "board",
            "clock": "cpu_hz", "rep": "rep", "curve": "curve", "backend": "backend"}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two boards, an op of each family (one flagged), two payload sizes, two reps."""
    ops = tuple(o for o in OPS if o.op in ("aes-ecb-encrypt", "rc6-ecb-encrypt", "sha256",
                                           "ecdsa-sign") and o.key_bits in (None, 128))
    return make_run(tmp_path_factory.mktemp("formats") / "run", ops=ops, payloads=(64, 1024),
                    n_windows=4, uncertainty=U,
                    point_flags=lambda p: ("ci_target_not_met",) if p.op == "sha256" else ())


def _factor(header: str, cell: str, point: pd.Series) -> bool:
    """Whether a factor cell of a table shows ``point``'s value."""
    value = point[_FACTORS[header]]
    if cell == "–":
        return pd.isna(value)
    if header == "payload":
        return int(cell.replace(",", "").removesuffix(" B")) == value
    if header == "clock":
        return cell == format_si(value, "Hz")
    return cell == str(int(value) if header in ("key bits", "rep") else value)


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def _check_value(cell: str, header: str, mean: float, u: float) -> None:
    """``cell`` is ``mean ± u`` in the header's unit: U to two significant digits, the
    value to the same decimal place (GUM), each within half its last digit."""
    prefix = re.search(r"\[(.?)[sJ]\]$", header)[1]
    scale = _SCALE[prefix]
    value, _, unc = cell.partition(" ± ")
    assert unc, f"{cell!r} has no uncertainty"
    places = _decimals(unc)
    assert _decimals(value) == places, cell
    assert len(unc.replace(".", "").lstrip("0")) == 2, cell  # two significant digits
    half = 0.5 * 10.0 ** -places * scale
    assert abs(float(value) * scale - mean) <= half * (1 + 1e-9), (cell, mean)
    assert abs(float(unc) * scale - u) <= half * (1 + 1e-9), (cell, u)


def _tables(text: str, cell_sep: str, rule: re.Pattern[str]) -> dict[str, list[list[str]]]:
    """Each family's table: its header row, then its rows (cells as text)."""
    tables: dict[str, list[list[str]]] = {}
    family = ""
    for line in text.splitlines():
        if m := re.match(r"### (.+)$|\\caption\{([^ }]+)", line):
            family = m[1] or m[2]
            tables[family] = []
        elif family and cell_sep in line and not rule.match(line):
            tables[family].append([c.strip() for c in line.strip().strip("|").removesuffix(
                r"\\").split(cell_sep)])
    return tables


def _check_tables(tables: dict[str, list[list[str]]], run_dir: Path) -> None:
    """Every ok point of the run is one row of its family's table, its numbers those of
    points.parquet."""
    points = load(run_dir).points
    ok = points[points["status"] == "ok"]
    assert sorted(tables) == sorted(set(ok["family"])), tables.keys()
    seen = 0
    for family, (headers, *rows) in tables.items():
        fam = ok[ok["family"] == family]
        factors = [h for h in headers if h in _FACTORS]
        assert factors[0] == "op" and "rep" in factors and "board" in factors, headers
        assert len(rows) == len(fam), (family, rows)
        for row in rows:
            cells = dict(zip(headers, row, strict=True))
            match = fam[[all(_factor(h, cells[h], p) for h in factors)
                         for _, p in fam.iterrows()]]
            assert len(match) == 1, (family, row)
            point = match.iloc[0]
            _check_value(cells[next(h for h in headers if h.startswith("time per op"))],
                         next(h for h in headers if h.startswith("time per op")),
                         point["time_per_op_s_mean"], point["time_per_op_u_s"])
            energy = next(h for h in headers if h.startswith("net energy per op"))
            _check_value(cells[energy], energy, point["net_energy_per_op_j_mean"],
                         point["net_energy_per_op_u_j"])
            assert ("ci_target_not_met" in cells.get("flags", "")) == (point["op"] == "sha256")
            seen += 1
    assert seen == len(ok)


def test_rig_report_format_md_writes_a_table_per_family_with_the_points_numbers(
        run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_rig(["report", str(run_dir), "--out", str(tmp_path / "out"),
                         "--format", "md"], capsys, tmp_path)
    assert code == 0, err
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert not (tmp_path / "out" / "report.html").exists()  # the tables alone
    _check_tables(_tables(text, " | ", re.compile(r"\| [:-]")), run_dir)
    # pipe tables: a rule under each header, the op left-aligned, the numbers right
    rules = [line for line in text.splitlines() if line.startswith("| :-- |")]
    assert len(rules) == 3 and all(line.count("--:") >= 4 for line in rules), rules
    assert "`ci_target_not_met`: " + FLAGS["ci_target_not_met"].meaning in text


def test_rig_report_format_tex_writes_booktabs_tables_with_the_points_numbers(
        run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_rig(["report", str(run_dir), "--out", str(tmp_path / "out"),
                         "--format", "tex"], capsys, tmp_path)
    assert code == 0, err
    text = (tmp_path / "out" / "report.tex").read_text(encoding="utf-8")
    for command in (r"\begin{tabular}", r"\toprule", r"\midrule", r"\bottomrule"):
        assert text.count(command) == 3, command  # one table per family
    body = "\n".join(line for line in text.splitlines() if not line.startswith("%"))
    assert "_" not in body.replace(r"\_", "") and "±" not in body  # all escaped
    assert "% flags: ci_target_not_met: " in text  # explained, in a comment
    plain = (text.replace(r" $\pm$ ", " ± ").replace(r"\textmu{}", "µ")
             .replace(" -- ", " – ").replace(r"\_", "_"))
    _check_tables(_tables(plain, " & ", re.compile(r"\\(top|mid|bottom)rule")), run_dir)


def test_format_gum_writes_u_to_two_digits_and_the_value_to_its_place() -> None:
    assert format_gum(12.3456, 0.5678) == "12.35 ± 0.57"
    assert format_gum(1534.2, 123.4) == "1530 ± 120"
    assert format_gum(12.3, 0.099996) == "12.30 ± 0.10"  # U rounds up to 0.10
    assert format_gum(-0.0001, 0.5) == "0.00 ± 0.50"  # never -0.00
    assert format_gum(0.5, float("nan")) == "0.500"  # no U: three digits
    assert format_gum(None, 0.1) == "–"
    assert column_prefix([38e-6, 1.5e-3, 149e-6]) == "µ"  # the median's
    assert column_prefix([float("nan"), None]) == ""


def test_a_bad_format_or_csv_with_a_text_format_is_refused(
        run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert_refused(["report", str(run_dir), "--out", str(tmp_path / "o"), "--format", "pdf"],
                   "'pdf': give html, md or tex", tmp_path, capsys, monkeypatch)
    assert_refused(["report", str(run_dir), "--out", str(tmp_path / "o"), "--format", "md",
                    "--csv"], "--csv writes the tables of the HTML report", tmp_path, capsys,
                   monkeypatch)
    assert_refused(["report", str(run_dir), "--out", str(run_dir), "--format", "md"],
                   "would delete the run", tmp_path, capsys, monkeypatch)


@pytest.mark.pipeline  # a whole report drawn, by rig report and again (tests/README.md)
def test_every_figure_has_an_svg_twin_and_the_csv_of_its_numbers(
        run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report"
    code, err = run_rig(["report", str(run_dir), "--out", str(out), "--format", "md"],
                        capsys, tmp_path)
    assert code == 0, err
    page = write_report(run_dir, out, flags=FLAGS).read_text(encoding="utf-8")
    pngs = sorted(p for p in out.glob("*.png"))
    assert {p.stem.split("-")[0] for p in pngs} >= {"energy", "payload", "relative"}
    for png in pngs:
        svg, csv = png.with_suffix(".svg"), png.with_suffix(".csv")
        assert re.search(r"<svg[^>]*xmlns=\"http://www.w3.org/2000/svg\"",
                         svg.read_text(encoding="utf-8")), svg
        assert f"href='{svg.name}'" in page and f"href='{csv.name}'" in page
        drawn = json.loads(png.with_suffix(".json").read_text())["points"]
        table = pd.read_csv(csv)
        assert len(table) == len(drawn) > 0, png
        for (_, row), point in zip(table.iterrows(), drawn, strict=True):
            assert (row["label"], row["x"], row["y"]) == (point["label"], point["x"],
                                                          point["y"])
            for key in (k for k in ("x_ci", "y_ci", "y_u") if k in point):
                for end, v in zip(("low", "high"), point[key], strict=True):
                    assert (math.isnan(row[f"{key}_{end}"]) if v is None
                            else row[f"{key}_{end}"] == v), (png, key)
    # the energy-time figure's CSV holds each point's interval, as the report computed it
    energy = pd.read_csv(out / "energy-time-symmetric.csv")
    assert (energy["y_ci_low"] < energy["y"]).all() and (energy["y"] < energy["y_ci_high"]).all()
    # the HTML report replaced its directory, and wrote the Markdown tables it held anew
    assert (out / "report.md").read_text(encoding="utf-8").count("### ") == 3

