"""The report in a real browser: Debian's headless Chromium (scripts/install-deps.sh) driven by
Playwright, on a small synthetic run (tests/support/synthetic.py)."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.synthetic import BOARDS, OPS, make_run

from energyrig.results.report import write_report
from energyrig.rig.flags import FLAGS

if TYPE_CHECKING:  # playwright: imported by the browser tests, not at collection
    from playwright.sync_api import Browser

# Figures whose points are means with a 95 % CI (the others show ratios or fractions).
PER_OP_FIGURES = ("energy-time-", "payload-")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # a family of each kind, two ops each, at two payload sizes: every figure of a report
    # and a table whose times sort by value, not as text (what these tests read of any run)
    run = make_run(tmp_path_factory.mktemp("runs") / "browser", boards=BOARDS[:1],
                   ops=(OPS[0], OPS[3], OPS[4], OPS[5], OPS[7], OPS[11]), payloads=(64, 1024),
                   reps=2, n_windows=4)
    # a real calibration id (one word of 117 characters) must not widen the page
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["calibration"]["id"] = "20261123T204232Z-ppk2-" + "+".join(
        ("baseline_s", "gain", "guard_s", "idle_drift_a_per_s", "idle_noise_a", "offset_a",
         "overhead_j", "overhead_s", "skew_s"))
    (run / "manifest.json").write_text(json.dumps(manifest))
    return write_report(run, flags=FLAGS)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    from support.browser import chromium

    with chromium() as browser:
        yield browser


@pytest.mark.parametrize("width", [1280, 900])
def test_the_report_renders_without_errors_or_overflow(browser: Browser, report: Path,
                                                       width: int) -> None:
    from support.browser import open_page

    page, errors = open_page(browser, report, width)
    images = page.evaluate("[...document.images].map(i => [i.getAttribute('src'), "
                           "i.complete && i.naturalWidth > 0])")
    assert len(images) >= 5
    assert [src for src, ok in images if not ok] == []
    page_width = page.evaluate("document.documentElement.clientWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= page_width
    # every table (or the box it scrolls in) ends within the page
    rights = page.evaluate("[...document.querySelectorAll('table')].map(t => "
                           "(t.closest('.scroll') || t).getBoundingClientRect().right)")
    assert rights and max(rights) <= page_width
    assert errors == []
    page.close()


def test_a_click_on_a_heading_sorts_the_table(browser: Browser, report: Path) -> None:
    from support.browser import open_page

    page, errors = open_page(browser, report, 1280)
    table = page.locator("table.sortable").first
    heading = table.locator("th", has_text="time / op").first
    column = table.evaluate("(t, h) => [...t.tHead.rows[0].cells].findIndex("
                            "c => c.innerText === h)", heading.inner_text())
    key = f"t => [...t.tBodies[0].rows].map(r => r.cells[{column}].innerText)"
    heading.click()
    up = table.evaluate(key)
    heading.click()
    down = table.evaluate(key)
    assert len(up) > 2 and up == down[::-1] and up != sorted(up)  # by value, not as text
    assert errors == []
    page.close()


def test_every_per_op_figure_shows_its_confidence_intervals(browser: Browser,
                                                            report: Path) -> None:
    from support.browser import open_page

    page, _ = open_page(browser, report, 1280)
    shown = page.evaluate("[...document.images].map(i => i.getAttribute('src'))")
    page.close()
    per_op = [src for src in shown if src.startswith(PER_OP_FIGURES)]
    assert any(src.startswith("payload-") for src in per_op)
    for src in per_op:
        data = json.loads((report.parent / src).with_suffix(".json").read_text())
        assert data["error_bars"].startswith("error bars: 95 % confidence interval"), src
        for point in data["points"]:
            low, high = point["y_ci"]
            assert low is not None and low < point["y"] < high, (src, point)
