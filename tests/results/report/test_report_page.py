"""The report's page as its reader meets it (issue 23): every flag shown where its figure is
and explained once, every table sorting on every heading, tables of points that tell their
points apart by factor, status and flags in sight at 800 px. In Debian's headless Chromium
driven by Playwright (as tests/results/report/test_report_browser.py), on synthetic runs
(tests/support/synthetic.py), and on the tables alone."""
from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pytest
from support.synthetic import BOARDS, OPS, make_run

from energyrig.domain import Point, Window
from energyrig.flags import BENCH_FLAGS, ENERGY_FLAGS, INTEGRITY_FLAGS
from energyrig.instruments.scope.flags import SCOPE_FLAGS
from energyrig.instruments.sigrok.flags import SIGROK_FLAGS
from energyrig.instruments.sim.flags import SIM_FLAGS
from energyrig.results import RunWriter, load
from energyrig.results.report import write_report
from energyrig.results.report.page import Images, page_html
from energyrig.results.report.sections import report_tables
from energyrig.results.report.tables import flag_legend, summarise_workloads
from energyrig.rig.flags import FLAGS, PIPELINE_FLAGS

# the report's figures drawn once per process for the same tables (support/report_memo.py)
pytestmark = pytest.mark.usefixtures("figures_drawn_once")

BUDGET = [{"component": "repeatability", "type": "A", "u_j": 1.5e-9, "source": "windows"},
          {"component": "supply voltage", "type": "B", "u_j": 7e-9, "source": "fixture"}]
UNKNOWN = "a_flag_of_a_later_version"

if TYPE_CHECKING:  # playwright: imported by the browser tests, not at collection
    from playwright.sync_api import Browser, Page


def _window_flags(point: Point, k: int) -> tuple[str, ...]:
    """An integrity flag that leaves a window out, signal flags, one flag no note knows."""
    if point.op == "sha256" and point.payload_bytes == 1024 and k == 1:
        return ("corrupt_samples",)
    if point.op == "rc6-ecb-encrypt" and k == 0:
        return ("glitch", "uncalibrated")
    if point.op == "sha512" and point.rep == 1 and k == 2:
        return (UNKNOWN,)
    return ()


def _point_flags(point: Point) -> tuple[str, ...]:
    return ("ci_target_not_met",) if point.rep == 1 else ()


#: The flagged ops above and their families' references (AES-128, SHA-256), a public-key op
#: with a key size and one with a curve, at two payload sizes (1,024 B written with its comma):
#: every table and column of the page, every flag, at a third of the whole synthetic run's
#: drawing (what the browser tests read holds of any run that has them).
FLAGGED_OPS = (OPS[0], OPS[3], OPS[4], OPS[5], OPS[7], OPS[11])


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = make_run(tmp_path_factory.mktemp("runs") / "flagged", boards=BOARDS[:1],
                   ops=FLAGGED_OPS, payloads=(64, 1024), reps=2,
                   n_windows=4, window_flags=_window_flags, point_flags=_point_flags,
                   uncertainty={"net_energy_per_op_u_j": 5e-9, "time_per_op_u_s": 1e-6,
                                "uncertainty_budget": BUDGET},
                   finish=False)
    # a point that failed for its stream: its windows' flag is in no ok point
    with RunWriter.resume(run) as writer:  # a payload size the run has not measured
        lost = [Window(0.01 * k, 0.01 * k + 0.005, 500, 1e-4, 1e-3, flags=("stream_loss",))
                for k in range(3)]
        writer.write_failed(Point(op="sha512", family="hash", board=BOARDS[0].name,
                                  payload_bytes=16384, cpu_hz=BOARDS[0].cpu_hz, rep=0),
                            "stream_loss 3 of 3 windows", windows=lost)
    return run


@pytest.fixture(scope="module")
def report(run_dir: Path) -> Path:
    return write_report(run_dir, flags=FLAGS)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    from support.browser import chromium

    with chromium() as browser:
        yield browser


PREFIX = {"G": 1e9, "M": 1e6, "k": 1e3, "m": 1e-3, "µ": 1e-6, "n": 1e-9, "p": 1e-12,
          "f": 1e-15}
NUMBER = re.compile(r"(-?[0-9.]+(?:e-?[0-9]+)?)\s*([GMkmµnpf]?)")


def _key(text: str, numeric: bool) -> tuple[int, Any]:
    """What a cell says, to order by: a numeric cell's first number with its SI prefix
    (``12 µs`` < ``1.2 ms``; numbers before words), else its text."""
    found = NUMBER.search(text.replace(",", "")) if numeric else None
    return (0, float(found[1]) * PREFIX.get(found[2], 1.0)) if found else (1, text)


def _column(page: Page, table: int, column: int) -> list[tuple[int, Any]]:
    cells = page.evaluate(
        "([t, c]) => [...document.querySelectorAll('table.sortable')[t].tBodies[0].rows]"
        ".map(r => [r.cells[c].innerText, r.cells[c].classList.contains('num')])",
        [table, column])
    return [_key(text, numeric) for text, numeric in cells]


def _rows(page: Page, table: int) -> list[str]:
    return page.evaluate("t => [...document.querySelectorAll('table.sortable')[t]"
                         ".tBodies[0].rows].map(r => r.innerText)", table)


def test_every_table_sorts_on_every_heading(browser: Browser, report: Path) -> None:
    from support.browser import open_page

    page, problems = open_page(browser, report, 1280)
    headings = page.evaluate("[...document.querySelectorAll('table.sortable')]"
                             ".map(t => [...t.tHead.rows[0].cells].map(c => c.innerText))")
    assert len(headings) >= 8  # the legend, workloads, fits, comparisons, points ...
    for t, names in enumerate(headings):
        table = page.locator("table.sortable").nth(t)
        before, reordered = _rows(page, t), False
        for c, name in enumerate(names):
            table.locator("th").nth(c).click()
            up = _column(page, t, c)
            assert up == sorted(up), (t, name)
            reordered |= _rows(page, t) != before
            table.locator("th").nth(c).click()
            down = _column(page, t, c)
            assert down == sorted(down, reverse=True), (t, name)
            reordered |= _rows(page, t) != before
        assert reordered or len(set(before)) < 2, (t, names)
    assert problems == []
    page.close()


def test_every_flag_is_on_the_page_and_explained_in_its_legend(
        browser: Browser, report: Path, run_dir: Path) -> None:
    from support.browser import open_page

    run = load(run_dir)
    carried = {f for flags in (*run.points["flag_list"], *run.windows["flag_list"])
               for f in flags}
    assert {"corrupt_samples", "glitch", "uncalibrated", "ci_target_not_met",
            "stream_loss", UNKNOWN} <= carried
    page, problems = open_page(browser, report, 1280)
    legend = page.locator("#flags + p + div table")
    rows = legend.evaluate("t => [...t.tBodies[0].rows].map(r => [...r.cells]"
                           ".map(c => c.innerText))")
    by_flag = {row[0]: row for row in rows}
    assert set(by_flag) == carried
    for flag, row in by_flag.items():
        note = FLAGS.get(flag)
        assert row[3] == (note.meaning if note else
                          "not described (a flag this version of energyrig does not know)")
        assert row[4] == (note.action if note else "")
    # counted as the tables hold them
    assert by_flag["ci_target_not_met"][1] == str(int(
        sum("ci_target_not_met" in f for f in run.points["flag_list"])))
    assert by_flag["stream_loss"][1:3] == ["1", "3"]
    # beside the figures: each workload row's flags cell lists its points' and windows' flags
    # and the windows left out; the failed point's row its own
    body = page.evaluate("[...document.querySelectorAll('table.sortable')].slice(1)"
                         ".map(t => t.innerText).join('\\n')")
    for flag in carried:
        assert flag in body, flag
    assert "1 window left out: corrupt_samples 1" in body
    assert problems == []
    page.close()


def test_each_point_and_workload_shows_its_own_flags(browser: Browser, report: Path,
                                                     run_dir: Path) -> None:
    from support.browser import open_page

    run = load(run_dir)
    page, _ = open_page(browser, report, 1280)
    tables = page.evaluate(
        "[...document.querySelectorAll('table.sortable')].map(t => [...t.rows]"
        ".map(r => [...r.cells].map(c => c.innerText)))")
    uncertainty = next(t for t in tables if any(h.startswith("U (k=2)") for h in t[0]))
    head = uncertainty[0]
    assert head[:6] == ["flags", "op", "key bits", "payload", "curve", "rep"]
    shown = {}
    for row in uncertainty[1:]:
        key = (*row[1:3], row[3].replace(",", "").removesuffix(" B"), *row[4:6])
        shown[key] = sorted(line for line in row[0].split("\n") if line and "left out" not in line)
    ok = run.points[run.points["status"] == "ok"]
    assert len(shown) == len(ok)
    for p in ok.itertuples():
        key = tuple("–" if pd.isna(v) else str(v)
                    for v in (p.op, p.key_bits, p.payload_bytes, p.curve, p.rep))
        assert shown[key] == p.flag_list, key
    workloads = next(t for t in tables if t[0][:2] == ["flags", "configuration"]
                     and any("rc6" in r[1] for r in t[1:]))
    assert all(set(r[0].split("\n")) >= {"glitch", "uncalibrated", "ci_target_not_met"}
               for r in workloads[1:] if r[1].startswith("rc6"))
    page.close()


@pytest.mark.parametrize("width", [800, 1280])
def test_status_and_flags_stay_in_sight(browser: Browser, report: Path, width: int) -> None:
    from support.browser import open_page

    page, problems = open_page(browser, report, width)
    view = page.evaluate("document.documentElement.clientWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= view
    placed = page.evaluate(
        "[...document.querySelectorAll('table.sortable')].flatMap(t => [...t.rows]"
        ".flatMap(r => [...r.cells].filter(c => ['flags', 'status'].includes("
        "t.tHead.rows[0].cells[c.cellIndex].innerText)).map(c => "
        "[t.tHead.rows[0].cells[c.cellIndex].innerText, c.cellIndex, "
        "c.getBoundingClientRect().left, c.getBoundingClientRect().right])))")
    assert {name for name, *_ in placed} == {"flags", "status"}
    for name, index, left, right in placed:
        assert index <= 1 and 0 <= left and right <= view, (name, index, left, right)
    assert problems == []
    page.close()


def test_tables_of_points_show_every_varying_factor_sorted_by_factor(tmp_path: Path) -> None:
    # rc4 at three payload sizes, twice, and AES at two key sizes: stored in random order
    points = [Point(op=op, family="symmetric", board="host", key_bits=key, payload_bytes=size,
                    rep=rep)
              for op, key in (("rc4", None), ("aes-ecb-encrypt", 128), ("aes-ecb-encrypt", 256))
              for size in (64, 256, 1024) for rep in (0, 1)]
    random.Random(3).shuffle(points)
    with RunWriter.create(tmp_path / "run", plan={"name": "order"}) as writer:
        for k, point in enumerate(points):
            energy, duration = 1e-6 * (k + 1), 0.01 * (1 + k / 50)
            writer.write_point(point, [Window(0.0, duration * f, 100, energy * f, 1e-6)
                                       for f in (1.0, 1.01, 0.99)], batch_n=10,
                               uncertainty={"net_energy_per_op_u_j": 1e-9, "time_per_op_u_s": 1e-6,
                                            "uncertainty_budget": BUDGET})
    tables = report_tables(load(tmp_path / "run"), FLAGS)
    assert tables.factors == ["op", "key_bits", "payload_bytes", "rep"]  # board is one
    got = list(tables.points[["op", "key_bits", "payload_bytes", "rep"]].itertuples(
        index=False, name=None))
    expected = sorted(((p.op, p.key_bits, p.payload_bytes, p.rep) for p in points),
                      key=lambda p: (p[0], -1 if p[1] is None else p[1], p[2], p[3]))
    assert [tuple(None if pd.isna(v) else v for v in row) for row in got] == expected
    # the page of those tables, as write_report builds it (no figure needed to read a table)
    page = page_html(load(tmp_path / "run"), tables, Images())
    section = page[page.index("Uncertainty of the net energy per op"):]
    heads = re.findall(r"<th title='click to sort'>([^<]+)</th>", section)
    assert heads[:5] == ["flags", "op", "key bits", "payload", "rep"]
    rc4 = re.findall(r"<td class=''>rc4</td><td class='num'>–</td><td class='num'>"
                     r"([0-9,]+) B</td><td class='num'>(\d)</td>", section)
    assert rc4 == [("64", "0"), ("64", "1"), ("256", "0"), ("256", "1"), ("1,024", "0"),
                   ("1,024", "1")]


def test_a_workload_lists_its_points_own_flags_and_its_windows_left_out(
        tmp_path: Path) -> None:
    point = Point(op="sha256", family="hash", board="b", payload_bytes=64)
    windows = [Window(0.0, 1e-3, 100, 2e-6, 1e-3, flags=("stream_loss",)),
               Window(2e-3, 3e-3, 100, 2.2e-6, 1e-3, flags=("glitch",)),
               Window(4e-3, 5e-3, 100, 2.1e-6, 1e-3)]
    with RunWriter.create(tmp_path / "run") as writer:
        writer.write_point(point, windows, batch_n=10, flags=("ci_target_not_met",))
    run = load(tmp_path / "run")
    row = summarise_workloads(run.windows, run.points).iloc[0]
    assert row["flag_list"] == ["ci_target_not_met", "glitch", "stream_loss"]
    assert (row["windows_excluded"], row["excluded_reason"]) == (1, "stream_loss 1")
    legend = flag_legend(run.points, run.windows, FLAGS).set_index("flag")
    assert list(legend.index) == ["glitch", "stream_loss", "ci_target_not_met"]  # notes' order
    assert list(legend["points"]) == [1, 1, 1] and list(legend["windows"]) == [1, 1, 0]
    assert legend.loc["glitch", "meaning"] == FLAGS["glitch"].meaning


def test_every_flag_the_rig_raises_has_a_note() -> None:
    named = {*ENERGY_FLAGS, *PIPELINE_FLAGS, *INTEGRITY_FLAGS, *SCOPE_FLAGS, *SIGROK_FLAGS,
             *SIM_FLAGS, *BENCH_FLAGS}
    assert set(FLAGS) == named
    assert all(n.meaning and n.action for n in FLAGS.values())
